// The task's element tree with boxes (core.getDOMInfo()).
() => core.getDOMInfo()
