"""Source formats: dbt, BIRD, WrenAI, Vanna and Snowflake Cortex knowledge as proposals (issue 16).

``base`` holds the contract every importer meets; one module per format.
"""
