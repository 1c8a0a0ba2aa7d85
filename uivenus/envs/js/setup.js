// Applies a task's app_state to a sandbox app.
(state) => window.uivenus.setup(state)
