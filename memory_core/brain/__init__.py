"""The brain as storage: the engine, transactions, schema, migrations, leases, upkeep.

:mod:`.db` opens a brain and owns its engine and transactions; :mod:`.schema`
is the tables (and the triggers that keep the full-text index and change
logs in step); :mod:`.migrations` brings a file's schema up to date;
:mod:`.leases` keeps one holder of a role per brain; :mod:`.maintenance`
counts, checks and rebuilds.
"""
