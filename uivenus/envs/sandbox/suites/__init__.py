"""One module per sandbox app, each calling `tasks.register(...)` with the app's bundled tasks."""
