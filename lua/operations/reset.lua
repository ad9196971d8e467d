-- reset: forget the key; answer with the empty state.
return change(KEYS, ARGV, algo, 'reset')
