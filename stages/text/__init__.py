"""What the stages share about text itself: scripts (`scripts.py`) and word lists
(`wordlists.py`). Imports no other stage."""
