"""Every change to teams and suites (docs/architecture.md#cases): the package is the entry
point, as the matcher's is its (``from cases import services``; ``services.create_suite``);
its modules, by domain, are its own:

- ``documents``: suite files from rows and rows from suite files, and the rules a suite
  file keeps to be stored (its size, lengths, no U+0000);
- ``teams``, ``labels``: teams and their members; a team's review labels;
- ``suites``: suites and their versions (each saved change a version, with its audit, under
  the suite's row lock), imports of a suite file, settings, picking a version;
- ``cases``: cases saved one at a time or several at once, expected calls put in place;
- ``tools``: the suite's tool catalog.
"""

from cases.services.cases import (
    NothingToChange,
    SavedCase,
    StaleEdit,
    call_warnings,
    case_problems,
    case_warnings,
    delete_case,
    likely_corrected,
    one_case_suite,
    put_expected_call,
    save_case,
    save_cases,
)
from cases.services.documents import (
    CALL_FIELDS,
    CASE_FIELDS,
    MAX_LENGTHS,
    SUITE_FIELDS,
    case_document,
    length_problems,
    nul_problems,
    rows_problem,
    suite_document,
    validate_suite,
)
from cases.services.labels import LabelTaken, save_label
from cases.services.suites import (
    KEPT_FIELDS,
    TRACE_CASE_MAP_LIMIT,
    TRACE_CASE_VALUE_LIMIT,
    ImportPreview,
    SuiteChanged,
    copy_suite,
    create_suite,
    import_preview,
    new_suite,
    pick_version,
    record_version,
    replace_contents,
    trace_case_map_problems,
    update_settings,
)
from cases.services.teams import LastAdmin, create_team, remove_member, set_member_role
from cases.services.tools import replace_tools, suite_tools, with_tools

__all__ = [
    "CALL_FIELDS",
    "CASE_FIELDS",
    "KEPT_FIELDS",
    "MAX_LENGTHS",
    "SUITE_FIELDS",
    "TRACE_CASE_MAP_LIMIT",
    "TRACE_CASE_VALUE_LIMIT",
    "ImportPreview",
    "LabelTaken",
    "LastAdmin",
    "NothingToChange",
    "SavedCase",
    "StaleEdit",
    "SuiteChanged",
    "call_warnings",
    "case_document",
    "case_problems",
    "case_warnings",
    "copy_suite",
    "create_suite",
    "create_team",
    "delete_case",
    "import_preview",
    "length_problems",
    "likely_corrected",
    "new_suite",
    "nul_problems",
    "one_case_suite",
    "pick_version",
    "put_expected_call",
    "record_version",
    "remove_member",
    "replace_contents",
    "replace_tools",
    "rows_problem",
    "save_case",
    "save_cases",
    "save_label",
    "set_member_role",
    "suite_document",
    "suite_tools",
    "trace_case_map_problems",
    "update_settings",
    "validate_suite",
    "with_tools",
]
