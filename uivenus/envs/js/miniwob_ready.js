// Whether the MiniWoB++ task page has set up its task.
() => WOB_TASK_READY === true
