"""The ``tht`` command line: parses arguments, calls the library, renders the result."""
