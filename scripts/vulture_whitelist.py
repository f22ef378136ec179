"""Names vulture cannot see used: read by a framework, a template or the wire, not by our code.

Run as `vulture supportgate scripts/vulture_whitelist.py --min-confidence 60 --ignore-decorators
@get,@post,@delete,@put,@patch` (scripts/test; the decorators are Litestar's route handlers).
Each `_.name` marks every attribute of that name used; keep every entry under its reason, and
add one only for a name that the code really needs and only something outside Python reads.
Code that only tests use is dead: remove it rather than list it here (the exceptions below
say what calls them).
"""

# ruff: noqa: B018 - each line is an expression vulture reads as a use (never run)
from typing import Any

_: Any = None

# Litestar reads a Controller's class attributes; OpenAPI objects' fields are its schema.
_.tags
_.security
_.additional_properties
_.to_schema

# SQLAlchemy: a TypeDecorator's hooks, a DB-API connection's attribute, table columns that only
# SQL reads (ORDER BY, the console's queries) or that the migrations define.
_.impl
_.cache_ok
_.process_bind_param
_.process_result_value
_.python_type
_.isolation_level
_.recorded_at
_.from_verdict
_.to_verdict
_.deleted_leaf_index

# The standard library calls these: logging's handlers, an argparse Action's signature.
_.handlers
_.option_string

# msgspec Structs of the contract and of the API's answers: every field is on the wire
# (manifests, the matrix, decisions, views), read by the policies, clients or templates.
_.accelerators
_.api_version
_.api_compatibility
_.arch_dependencies
_.authentication
_.builds
_.compiler
_.consumer
_.correct
_.current_version
_.decode_gpus
_.decode_latency_ms
_.distributed_performance
_.distributed_stability
_.duration_seconds
_.evidence_max_age_days
_.http_transport
_.interconnect
_.isolated_branch
_.kernels_and_correctness
_.kv_cache
_.latest_decision
_.load_balancing
_.long_context
_.mode
_.models
_.numerical_parity
_.official_support
_.pd_orchestration
_.pending_deliveries
_.performance
_.performant
_.persistent
_.pinned
_.platforms
_.prefill_gpus
_.prefill_latency_ms
_.production_stack_unchanged
_.proposed_version
_.provider
_.provides
_.python
_.quantization
_.recovery_s
_.reference_runtime
_.reference_topology
_.replicas
_.rules_added
_.rules_removed
_.service
_.service_completeness
_.single_scale_up_domain
_.stage
_.structured_output
_.toolkit
_.topology
_.tracked_since
_.violations_added
_.violations_removed
_.workload_improvement

# The OSCAL document's Structs (supportgate/oscal/document.py): every field is on the wire,
# read by the auditors' tools.
_.ns
_.resources
_.last_modified
_.oscal_version
_.inventory_items
_.include_all
_.control_selections
_.subject_uuid
_.relevant_evidence
_.collected
_.target_id
_.observation_uuid
_.related_observations
_.reviewed_controls
_.local_definitions
_.import_ap
_.back_matter

# Fields on the wire copied from their rows by msgspec.convert: webhook subscriptions' and
# deliveries' (GET /v1/webhooks, .../deliveries: supportgate/webhooks/services.py), the matrix
# source's (GET /v1/matrix/source: supportgate/matrix_sources/services.py).
_.disabled_at
_.disabled_reason
_.last_status_code
_.last_published_version
_.last_published_at

# The console's Jinja templates read these view fields (supportgate/console/templates/).
_.causes
_.chart
_.charted
_.matrix_versions
_.chart_is_partial
_.diff
_.more
_.deployments
_.more_deployments
_.turn
_.unchanged_violations
_.label_x
_.right_x
_.bottom_y
_.width
_.height
_.ticks
_.levels

# Test oracles, documented where they are defined: the rule head a METADATA block sits on
# (tests/policies/test_catalog.py checks they agree).
_.head_set
_.head_id

# Waiting for their callers in issue 11's write-path rewrite, which is under way: the sweep
# queue's wait_idle (reevaluation/services.py, being rewritten; tests wait on it).
_.wait_idle

# Read by Litestar when it renders the OpenAPI document (supportgate/openapi.py
# OverlappingAnswers sets it on a response's Schema).
_.any_of

# Python calls a module's __getattr__ for a name the module lacks (PEP 562): supportgate.tlog
# loads its modules on first use this way.
_.__getattr__

# argparse calls it for every add_argument (supportgate/cli.py's parser sizes it without shutil).
_._get_formatter
