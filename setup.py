"""Packaging details pyproject.toml cannot express: the top-level rules/ and
templates/ folders ship inside the package as advisor/rules and advisor/templates."""

from setuptools import find_packages, setup

setup(
    packages=find_packages(include=["advisor", "advisor.*"]) + ["advisor.rules", "advisor.templates"],
    package_dir={"advisor": "advisor", "advisor.rules": "rules", "advisor.templates": "templates"},
    package_data={"advisor.rules": ["**/*.yaml", "**/*.yml"], "advisor.templates": ["**/*.j2", "**/*.css"]},
    include_package_data=False,
)
