"""Reference knowledge shipped with the advisor (tables with their sources), no logic."""
