# Turn an abilist (see nptl-compat/<arch>/abilist) into either the linker
# version script (-v out=map) or the header of per-symbol version macros
# (-v out=header) that XP_EXPORT expands.  The versions sort as glibc's do.
function vkey(v,   parts, n, i, k) {
  if (v !~ /^GLIBC_[0-9]/) return "z" v
  n = split(substr(v, 7), parts, ".")
  k = "a"
  for (i = 1; i <= 4; i++) k = k sprintf("%04d", (i <= n) ? parts[i] : 0)
  return k
}
/^#/ || NF == 0 { next }
{
  name = $1
  nsyms++; syms[nsyms] = name
  defv[name] = $2
  if ($2 != "-") { versions[$2] = 1; members[$2] = members[$2] "    " name ";\n" }
  ncompat[name] = 0
  for (i = 3; i <= NF; i++) {
    split($i, vi, "=")
    versions[vi[1]] = 1
    members[vi[1]] = members[vi[1]] "    " name ";\n"
    ncompat[name]++
    compat_ver[name, ncompat[name]] = vi[1]
    compat_impl[name, ncompat[name]] = (2 in vi) ? vi[2] : ""
  }
}
END {
  if (out == "map") {
    nv = 0
    for (v in versions) { nv++; keys[nv] = vkey(v) "\t" v }
    # insertion sort: the lists are short
    for (i = 2; i <= nv; i++) {
      x = keys[i]; j = i - 1
      while (j >= 1 && keys[j] > x) { keys[j + 1] = keys[j]; j-- }
      keys[j + 1] = x
    }
    prev = ""
    for (i = 1; i <= nv; i++) {
      split(keys[i], kv, "\t"); v = kv[2]
      printf "%s {\n  global:\n%s", v, members[v]
      if (i == 1) printf "  local:\n    *;\n"
      if (prev != "" && v ~ /^GLIBC_[0-9]/) printf "} %s;\n", prev; else printf "};\n"
      if (v ~ /^GLIBC_[0-9]/) prev = v
    }
  } else {
    print "/* Generated from the abilist by gen-symver.awk; do not edit.  */"
    for (s = 1; s <= nsyms; s++) {
      name = syms[s]
      line = "#define XP_VERSIONS_" name
      # A name with one version gets it from the version script alone; a
      # .symver would define it twice.
      # Old versions with code of their own (no alias) need the default
      # through an alias too, with the plain name kept out of the dynamic
      # symbol table (XP_WITH_OLD_ABI before the definition).
      naliases = 0
      for (i = 1; i <= ncompat[name]; i++)
        if (compat_impl[name, i] == "")
          naliases++
      if (defv[name] != "-" && naliases > 0)
        line = line " XP_SYMVER_DEFAULT (" name ", \"" defv[name] "\")"
      else if (defv[name] != "-" && ncompat[name] > 0)
        line = line " XP_SYMVER_DEFAULT_ALIAS (" name ", \"" defv[name] "\")"
      for (i = 1; i <= ncompat[name]; i++) {
        v = compat_ver[name, i]; impl = compat_impl[name, i]
        tag = v; gsub(/[^A-Za-z0-9]/, "_", tag)
        if (impl != "")
          impls = impls "#define XP_OLD_VERSION_" impl " XP_SYMVER_IMPL (" \
                  name ", " impl ", \"" v "\")\n"
        else
          line = line " XP_SYMVER_COMPAT (" name ", " tag ", \"" v "\")"
      }
      print line
    }
    printf "%s", impls
  }
}
