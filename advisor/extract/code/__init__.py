"""The training script, read without running it -> ``code_finding`` facts and the settings its code states.

``index`` indexes one script's tree; ``calls`` names what a call does; ``loop``, ``loss``, ``keras`` and
``metrics`` hold the checks' detectors; ``checks`` is the table of checks; ``settings`` takes the settings the
code states; ``extract`` runs them over the run's scripts.
"""
