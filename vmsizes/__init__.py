"""Azure GPU/HPC VM size catalog: sizes with sources, the naming parser, retirement dates, quota arithmetic.

Depends only on the standard library and PyYAML (the policy pack imports it from its own small virtualenv).
"""

from vmsizes.catalog import all_sizes, describe, lookup
from vmsizes.errors import UnknownSize
from vmsizes.model import VmSize
from vmsizes.naming import ParsedName, parse_name
from vmsizes.retirement import retired, retirement_date

__all__ = [
    "ParsedName",
    "UnknownSize",
    "VmSize",
    "all_sizes",
    "describe",
    "lookup",
    "parse_name",
    "retired",
    "retirement_date",
]
