"""The pages the project writes (demo report, grounding misses, run viewer), from packaged Jinja2 templates.

A layer beside `evals` (which uses it): it reads the trajectory store and the action records, nothing above.
"""

from uivenus.reports.pages import (
    draw_action,
    episode_view,
    plot_accuracy,
    read_run_view,
    render,
    write_misses_page,
    write_report,
    write_run_view,
)

__all__ = ["draw_action", "episode_view", "plot_accuracy", "read_run_view", "render", "write_misses_page",
           "write_report", "write_run_view"]
