#!/usr/bin/env bash
# umbrella_headers_test.sh INCLUDE_DIR
#
# Every folder of public headers has an umbrella header next to it
# (strata/pipeline/ -> strata/pipeline.h) that says what the folder owns and
# includes every header in it; strata/strata.h includes every umbrella. Names
# each header an umbrella misses.
set -euo pipefail
root=$1/strata
missing=0
for dir in $(find "$root" -mindepth 1 -type d | sort); do
  folder=${dir#"$root"/}
  umbrella=$root/$folder.h
  if [[ ! -f $umbrella ]]; then
    echo "strata/$folder/ has no umbrella header strata/$folder.h" >&2
    missing=1
    continue
  fi
  for header in "$dir"/*.h; do
    [[ -e $header ]] || continue
    name=strata/$folder/$(basename "$header")
    grep -q "#include \"$name\"" "$umbrella" ||
      { echo "strata/$folder.h does not include $name" >&2; missing=1; }
  done
  for sub in "$dir"/*/; do
    [[ -d $sub ]] || continue
    name=strata/$folder/$(basename "$sub").h
    grep -q "#include \"$name\"" "$umbrella" ||
      { echo "strata/$folder.h does not include $name" >&2; missing=1; }
  done
  if [[ $folder != */* ]]; then
    grep -q "#include \"strata/$folder.h\"" "$root/strata.h" ||
      { echo "strata/strata.h does not include strata/$folder.h" >&2; missing=1; }
  fi
done
exit $missing
