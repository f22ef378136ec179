"""Evaluating manifests: resolving hardware, building policy inputs, assembling decisions."""
