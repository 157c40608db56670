"""The field priors per symptom and the cheapest check per cause are complete, consistent and cited."""

from __future__ import annotations

import re

import pytest

from advisor.causes import CAUSE_BY_ID
from advisor.facts.symptom import SYMPTOM_IDS
from advisor.knowledge.cause_checks import CHECK_SOURCES, CHECKS
from advisor.knowledge.prior_sources import SOURCE_BY_KEY, SOURCES
from advisor.knowledge.symptom_priors import BASIS, COUNTS, PRIORS


def test_every_symptom_has_a_prior_and_no_other_key():
    assert set(PRIORS) == set(SYMPTOM_IDS)
    assert set(COUNTS) == set(SYMPTOM_IDS) and set(BASIS) == set(SYMPTOM_IDS)


@pytest.mark.parametrize("symptom", SYMPTOM_IDS)
def test_keys_are_known_causes_or_other(symptom):
    unknown = [c for c in PRIORS[symptom] if c != "other" and c not in CAUSE_BY_ID]
    assert not unknown


@pytest.mark.parametrize("symptom", SYMPTOM_IDS)
def test_distribution_sums_to_one_with_other(symptom):
    shares = PRIORS[symptom]
    assert "other" in shares
    assert all(0.0 < p < 1.0 for p in shares.values())
    assert sum(shares.values()) == pytest.approx(1.0, abs=1e-6)
    assert 3 <= len(shares) - 1 <= 8  # the causes that matter, plus "other"


@pytest.mark.parametrize("symptom", SYMPTOM_IDS)
def test_priors_are_the_add_one_smoothed_counts(symptom):
    counts = COUNTS[symptom]
    assert set(counts) == set(PRIORS[symptom])
    total = sum(counts.values()) + len(counts)
    for cause, n in counts.items():
        assert PRIORS[symptom][cause] == pytest.approx((n + 1) / total, abs=1e-12), cause


@pytest.mark.parametrize("symptom", SYMPTOM_IDS)
def test_basis_names_a_source(symptom):
    text = BASIS[symptom]
    named = set(re.findall(r"\[([a-z0-9_]+)\]", text))
    assert named, f"{symptom}: the basis names no [source]"
    assert named <= set(SOURCE_BY_KEY), named - set(SOURCE_BY_KEY)
    assert set(BASIS) == set(SYMPTOM_IDS)


def test_sources_are_complete_records():
    assert len({s.key for s in SOURCES}) == len(SOURCES)
    for s in SOURCES:
        assert s.citation and s.counted and s.url.startswith("https://"), s.key


def test_every_cause_has_one_check():
    assert set(CHECKS) == set(CAUSE_BY_ID)
    for cause, text in CHECKS.items():
        assert text.strip() and text[0].isupper() and text.rstrip().endswith("."), cause


def test_check_sources_cite_known_sources():
    assert set(CHECK_SOURCES) <= set(CHECKS)
    for cause, where in CHECK_SOURCES.items():
        keys = set(re.findall(r"\b([a-z0-9_]+):", where))
        assert keys and keys <= set(SOURCE_BY_KEY), (cause, keys)
