"""abcd's command-line client (``abcd``): asks the daemon, or runs the core in-process."""
