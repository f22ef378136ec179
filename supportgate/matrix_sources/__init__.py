"""Following the support matrix where it is kept: a git repository or an https URL
(SUPPORTGATE_MATRIX_SOURCE, docs/matrix-sources.md).

    spec          the setting: GitSource | HttpsSource, shown without credentials
    fetch         what a read gives (Fetched, Unchanged; SourceUnreachable, NoDocument)
    git           GitReader: `git ls-remote`, then a shallow forced fetch into the cache
    https         HttpsReader: If-None-Match / ETag, one deadline per read
    services      MatrixSourceService: a sync (lock, read, validate, publish, record)
    repository    matrix_source_state, the syncs' outcome (its one writer)
    views         GET /v1/matrix/source
    controllers   GET /v1/matrix/source, POST /v1/matrix/sync

The scheduler (supportgate/reevaluation/schedule.py) polls; publishing is the matrix
domain's (MatrixService.publish, through the ledger).
"""
