"""OSWorld-format desktop tasks on the native Xvfb desktop: isolation, setup steps, getters, metrics, evaluator.

A task's JSON (`config` steps, `evaluator` with getters and metrics) runs in its own isolated root
(`isolation.py`); `evaluator.py` turns its evaluator into a verdict, `checker.py` registers it as check kind
"osworld". Nothing heavy is imported here.
"""
