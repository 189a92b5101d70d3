-- The shared response store's own database (RESUMEBIAS_STORE_URL); Dagster's is POSTGRES_DB.
CREATE DATABASE resumebias_store;
