"""supportgate: policy-as-code compliance for LLM inference deployments."""

__version__ = "0.1.0"
