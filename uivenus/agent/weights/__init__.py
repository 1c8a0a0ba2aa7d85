"""Model weights shipped with the package (`nano/`: the miniature recipe's MOPD student)."""
