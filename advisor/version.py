"""The version of advisor: one source for the package metadata (pyproject.toml), the reports and the rule cache."""

__version__ = "0.1.0"
