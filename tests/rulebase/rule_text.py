"""A minimal valid rule around a `when:` block, for engine tests."""

from __future__ import annotations

import textwrap


def rule_yaml(when: str, rule_id: str = "r", as_list_item: bool = False) -> str:
    """``when`` is the YAML body under `when:` indented by two spaces (``  all:\\n    - ...``)."""
    text = f"""id: {rule_id}
cause: custom_cause
title: t
severity: low
confidence: 0.5
when:
{when}
evidence: fired
remedies: [x]
doc: {{what: a, why: b, fix: c}}
tests:
  fires: [{{name: a, facts: []}}]
  quiet: [{{name: b, facts: []}}]
"""
    if as_list_item:
        return "- " + textwrap.indent(text, "  ")[2:]
    return text
