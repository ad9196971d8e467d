-- release: give a slice's unused units back to the window it was counted in.
return operation(algo, 'release')(KEYS, ARGV)
