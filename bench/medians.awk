# medians.awk: the medians of a benchmark's rounds. Each input line is a
# label and its figures, tab-separated; cols names the figures and their
# printf formats ("spans/s=%.0f,µs CPU/span=%.1f"). For each label, in the
# order first met, it prints the median of each figure over its rounds;
# with base and other set (two labels), it then prints other's medians as
# ratios to base's.
#
#   awk -F'\t' -v cols='traces/s=%.0f,s CPU=%.1f' -v base=before -v other=after -f bench/medians.awk rounds.tsv

function median(list,   a, m, i, j, v) {
  m = split(list, a, " ")
  for (i = 2; i <= m; i++) {
    v = a[i] + 0
    for (j = i - 1; j >= 1 && a[j] + 0 > v; j--) a[j + 1] = a[j]
    a[j + 1] = v
  }
  return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
}

BEGIN {
  ncols = split(cols, spec, ",")
  for (c = 1; c <= ncols; c++) {
    split(spec[c], kv, "=")
    name[c] = kv[1]
    format[c] = kv[2]
  }
}

{
  if (!($1 in rounds)) order[++labels] = $1
  rounds[$1]++
  for (c = 1; c <= ncols; c++) values[$1, c] = values[$1, c] " " $(c + 1)
}

END {
  for (l = 1; l <= labels; l++) {
    label = order[l]
    line = sprintf("== median of %d rounds: %-12s", rounds[label], label)
    for (c = 1; c <= ncols; c++) {
      med[label, c] = median(values[label, c])
      line = line sprintf("  " format[c] " %s", med[label, c], name[c])
    }
    print line
  }
  if (base != "" && other != "" && (base in rounds) && (other in rounds)) {
    line = sprintf("== %s against %s:", other, base)
    for (c = 1; c <= ncols; c++)
      line = line sprintf("  %.2fx the %s", med[base, c] ? med[other, c] / med[base, c] : 0, name[c])
    print line
  }
}
