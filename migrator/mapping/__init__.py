"""Mapping tables: typed entries (`entries`), loading and validation (`load`), composition (`compose`)."""

from migrator.mapping.compose import (
                                      KeyChange,
                                      KeywordChange,
                                      MappingSet,
                                      ModuleChange,
                                      PathChange,
                                      SymbolChange,
                                      UnknownRelease,
                                      compose,
)
from migrator.mapping.load import TableError, TableSet, builtin_mappings_dir, load_builtin, load_table

__all__ = [
    "KeyChange", "KeywordChange", "MappingSet", "ModuleChange", "PathChange", "SymbolChange", "TableError", "TableSet",
    "UnknownRelease",
    "builtin_mappings_dir", "compose", "load_builtin", "load_table",
]
