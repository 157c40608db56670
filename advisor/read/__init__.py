"""File formats -> raw records. No judgement: readers never name a cause."""
