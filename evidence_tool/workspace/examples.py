"""One example unit per kind, in English or Italian, for ``tht workspace new --example``.

They describe a small shop database (``sales.orders``, ``sales.customers``) so
that a new workspace validates, consolidates and answers a search at once; a
test keeps every one valid and canonical in both languages.
"""

from __future__ import annotations

from evidence_tool.unit.fields import is_italian

# kind -> (file name, id suffix, metadata lines after 'language', body), per heading language.
_EN: dict[str, tuple[str, str, str]] = {
    "domain": (
        "cancelled-orders",
        "purposes: [sql_generation]\napplies_to:\n  tables: [sales.orders]\n"
        "  columns: [sales.orders.status]\n",
        "# Leave cancelled orders out of revenue\n\n## Rule\n\n"
        "Revenue counts only orders with `sales.orders.status <> 'X'`: a cancelled order\n"
        "was never paid.\n",
    ),
    "glossary": (
        "customer",
        "purposes: [disambiguation, rewriting]\napplies_to:\n  concepts: [customer]\n"
        "  tables: [sales.customers]\n",
        "# Customer\n\n## Definition\n\n"
        "A person or company that placed at least one order, one row of `sales.customers`.\n\n"
        "## Synonyms\n\n- client\n- buyer\n",
    ),
    "enum": (
        "order-status",
        "purposes: [disambiguation, sql_generation]\napplies_to:\n"
        "  columns: [sales.orders.status]\n",
        '# Order status\n\n## Column\n\nsales.orders.status\n\n## Values\n\n### "O"\n\n'
        'Open: placed, not shipped yet.\n\n### "S"\n\nShipped.\n\n### "X"\n\nCancelled.\n',
    ),
    "example": (
        "orders-per-month",
        "purposes: [sql_generation]\napplies_to:\n  tables: [sales.orders]\n",
        "# Orders per month\n\n## Question\n\nHow many orders were placed each month?\n\n"
        "## Interpretation\n\nCount the orders that were not cancelled by the month of "
        "`sales.orders.order_date`.\n\n```sql\n"
        "SELECT date_trunc('month', o.order_date)::date AS month, count(*) AS orders\n"
        "FROM sales.orders AS o\nWHERE o.status <> 'X'\nGROUP BY 1\nORDER BY 1;\n```\n",
    ),
    "mapping": (
        "order-date",
        "purposes: [schema_linking]\napplies_to:\n  concepts: [order date]\n",
        "# Order date\n\n## Concept\n\norder date\n\n## Tables\n\n- sales.orders\n\n"
        "## Columns\n\n- sales.orders.order_date\n",
    ),
    "normalization": (
        "country-code",
        "purposes: [rewriting, sql_generation]\napplies_to:\n"
        "  columns: [sales.customers.country]\n",
        "# Country names to country codes\n\n## Input\n\n"
        'A country as users type it: "Italy", "united kingdom", "UK".\n\n'
        "## Output\n\nThe two-letter ISO 3166 code stored in `sales.customers.country`: "
        "`IT`, `GB`.\n\n## Rule\n\nMap the name to its ISO code; upper-case a code typed "
        "in lower case.\n",
    ),
    "formula": (
        "average-order-value",
        "purposes: [sql_generation]\napplies_to:\n  concepts: [average order value]\n"
        "  tables: [sales.orders]\n",
        "# Average order value\n\n## Concept\n\naverage order value\n\n## Columns\n\n"
        "- sales.orders.total_amount\n- sales.orders.status\n\n## SQL\n\n```sql\n"
        "avg(sales.orders.total_amount) FILTER (WHERE sales.orders.status <> 'X')\n```\n",
    ),
    "reference": (
        "sales-schema",
        "purposes: [schema_linking]\n",
        "# Sales schema documentation\n\n## URL\n\nhttps://docs.example.org/sales/schema\n\n"
        "## Label\n\nSales schema\n\n## Description\n\n"
        "Tables, columns and keys of the `sales` schema.\n",
    ),
}

_IT: dict[str, tuple[str, str, str]] = {
    "domain": (
        "ordini-annullati",
        _EN["domain"][1],
        "# Escludere gli ordini annullati dal fatturato\n\n## Regola\n\n"
        "Il fatturato conta solo gli ordini con `sales.orders.status <> 'X'`: un ordine\n"
        "annullato non è mai stato pagato.\n",
    ),
    "glossary": (
        "cliente",
        "purposes: [disambiguation, rewriting]\napplies_to:\n  concepts: [cliente]\n"
        "  tables: [sales.customers]\n",
        "# Cliente\n\n## Definizione\n\n"
        "Persona o azienda che ha fatto almeno un ordine, una riga di `sales.customers`.\n\n"
        "## Sinonimi\n\n- acquirente\n- compratore\n",
    ),
    "enum": (
        "stato-ordine",
        _EN["enum"][1],
        '# Stato dell\'ordine\n\n## Colonna\n\nsales.orders.status\n\n## Valori\n\n### "O"\n\n'
        'Aperto: inserito, non ancora spedito.\n\n### "S"\n\nSpedito.\n\n### "X"\n\n'
        "Annullato.\n",
    ),
    "example": (
        "ordini-per-mese",
        _EN["example"][1],
        "# Ordini per mese\n\n## Domanda\n\nQuanti ordini sono stati fatti ogni mese?\n\n"
        "## Interpretazione\n\nContare gli ordini non annullati per mese di "
        "`sales.orders.order_date`.\n\n```sql\n"
        "SELECT date_trunc('month', o.order_date)::date AS mese, count(*) AS ordini\n"
        "FROM sales.orders AS o\nWHERE o.status <> 'X'\nGROUP BY 1\nORDER BY 1;\n```\n",
    ),
    "mapping": (
        "data-ordine",
        "purposes: [schema_linking]\napplies_to:\n  concepts: [data dell'ordine]\n",
        "# Data dell'ordine\n\n## Concetto\n\ndata dell'ordine\n\n## Tabelle\n\n"
        "- sales.orders\n\n## Colonne\n\n- sales.orders.order_date\n",
    ),
    "normalization": (
        "codice-paese",
        _EN["normalization"][1],
        "# Nomi di paese in codici\n\n## Input\n\n"
        'Un paese come lo scrivono gli utenti: "Italia", "regno unito", "UK".\n\n'
        "## Output\n\nIl codice ISO 3166 di due lettere in `sales.customers.country`: "
        "`IT`, `GB`.\n\n## Regola\n\nConvertire il nome nel suo codice ISO; scrivere in "
        "maiuscolo un codice digitato in minuscolo.\n",
    ),
    "formula": (
        "valore-medio-ordine",
        "purposes: [sql_generation]\napplies_to:\n  concepts: [valore medio dell'ordine]\n"
        "  tables: [sales.orders]\n",
        "# Valore medio dell'ordine\n\n## Concetto\n\nvalore medio dell'ordine\n\n"
        "## Colonne\n\n- sales.orders.total_amount\n- sales.orders.status\n\n## SQL\n\n"
        "```sql\navg(sales.orders.total_amount) FILTER (WHERE sales.orders.status <> 'X')\n"
        "```\n",
    ),
    "reference": (
        "schema-vendite",
        _EN["reference"][1],
        "# Documentazione dello schema vendite\n\n## URL\n\n"
        "https://docs.example.org/sales/schema\n\n## Etichetta\n\nSchema vendite\n\n"
        "## Descrizione\n\nTabelle, colonne e chiavi dello schema `sales`.\n",
    ),
}


def example_units(language: str) -> dict[str, bytes]:
    """``{curated-relative path: unit bytes}``, one unit per kind, headings in ``language``.

    Italian and its regional variants get Italian headings, every other language the
    English ones (docs/unit-format.md, section 4).
    """
    units = {}
    for kind, (name, metadata, body) in (_IT if is_italian(language) else _EN).items():
        text = (
            f"---\nschema_version: 4\nid: evidence:example:{name}\nkind: {kind}\n"
            f"language: {language}\n{metadata}---\n\n{body}"
        )
        units[f"{kind}/{name}.md"] = text.encode("utf-8")
    return units
