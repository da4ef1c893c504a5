"""The python launches of a script and their Hydra overrides: collected beside the shell rewriter
(`migrator/rewrite/shell/hydra_launches.py`), where the migration's review of its own edits reads them too."""

from migrator.rewrite.shell.hydra_launches import Launch, LaunchOverride, ShellScript, exclusive, launches, shell_text

__all__ = ["Launch", "LaunchOverride", "ShellScript", "exclusive", "launches", "shell_text"]
