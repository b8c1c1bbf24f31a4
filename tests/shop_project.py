"""A dbt project in the shape of dbt-labs/jaffle_shop, written by the tests (not copied).

A bakery's shop: staging models with tests only (``accepted_values`` without meanings, as
jaffle_shop's staging ``schema.yml`` has them), mart models with descriptions, a docs
block that gives an order state's meanings as a table, and a ``relationships`` test from
an order to its customer.
"""

from __future__ import annotations

from pathlib import Path

PROJECT_YML = """\
name: 'crumb_shop'
config-version: 2
version: '0.3'
profile: 'crumb_shop'

model-paths: ["models"]
seed-paths: ["seeds"]

models:
  crumb_shop:
    materialized: table
    staging:
      materialized: view
"""

DOCS_MD = """\
{% docs basket_state %}

A basket moves through these states:

| state      | description                                      |
|------------|--------------------------------------------------|
| open       | The customer is still adding loaves               |
| paid       | The till took the payment                         |
| collected  | The customer took the basket home                 |
| refunded   | The till gave the money back                      |

{% enddocs %}
"""

MARTS_YML = """\
version: 2

models:
  - name: patrons
    description: One row per patron of the bakery, with facts derived from their baskets

    columns:
      - name: patron_id
        description: The identifier of a patron
        tests:
          - unique
          - not_null

      - name: nickname
        description: What the staff call the patron at the counter

      - name: first_visit
        description: Day (local time) of the patron's first basket

  - name: baskets
    description: One row per basket, with what was paid for it

    columns:
      - name: basket_id
        description: The identifier of a basket
        tests:
          - unique
          - not_null

      - name: patron_id
        description: The patron who filled the basket
        tests:
          - not_null
          - relationships:
              to: ref('patrons')
              field: patron_id

      - name: state
        description: '{{ doc("basket_state") }}'
        tests:
          - accepted_values:
              values: ['open', 'paid', 'collected', 'refunded']

      - name: total_cents
        description: What the basket cost, in cents
"""

STAGING_YML = """\
version: 2

models:
  - name: stg_patrons
    columns:
      - name: patron_id
        tests:
          - unique
          - not_null

  - name: stg_baskets
    columns:
      - name: basket_id
        tests:
          - unique
      - name: state
        tests:
          - accepted_values:
              values: ['open', 'paid', 'collected', 'refunded']

  - name: stg_tills
    columns:
      - name: till_id
        tests:
          - unique
      - name: tender
        tests:
          - accepted_values:
              values: ['cash', 'card', 'voucher']
"""

#: The units the marts give (staging models have no descriptions), in proposal order.
MART_IDS = [
    "evidence:dbt:patrons",
    "evidence:dbt:patrons.patron_id",
    "evidence:dbt:patrons.nickname",
    "evidence:dbt:patrons.first_visit",
    "evidence:dbt:baskets",
    "evidence:dbt:baskets.basket_id",
    "evidence:dbt:baskets.patron_id",
    "evidence:dbt:baskets.patron_id.joins.patrons.patron_id",  # the relationships test
    "evidence:dbt:baskets.state",
    "evidence:dbt:baskets.state.values",
    "evidence:dbt:baskets.total_cents",
]


def write_shop(root: Path, *, staging: bool = True) -> Path:
    """The project under ``root`` (created); ``staging=False`` leaves the staging folder out."""
    files = {
        "dbt_project.yml": PROJECT_YML,
        "models/docs.md": DOCS_MD,
        "models/marts/schema.yml": MARTS_YML,
        "models/marts/patrons.sql": "select * from {{ ref('stg_patrons') }}\n",
        "models/marts/baskets.sql": "select * from {{ ref('stg_baskets') }}\n",
    }
    if staging:
        files["models/staging/schema.yml"] = STAGING_YML
        files["models/staging/stg_baskets.sql"] = "select * from {{ source('till', 'b') }}\n"
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def document_column(root: Path, model: str, column: str, description: str) -> None:
    """Adds a described column at the end of a mart model's column list."""
    path = root / "models/marts/schema.yml"
    text = path.read_text(encoding="utf-8")
    anchor = f"  - name: {model}\n"
    start = text.index(anchor)
    nxt = text.find("\n  - name: ", start + len(anchor))
    end = len(text) if nxt == -1 else nxt + 1
    block = text[start:end].rstrip("\n") + (
        f"\n\n      - name: {column}\n        description: {description}\n"
    )
    path.write_text(text[:start] + block + ("\n" + text[end:] if nxt != -1 else ""), "utf-8")
