"""Reports: the typed Report (model.py, the JSON contract), plots, rendering."""
