-- reset: forget the key; answer with the empty state.
return operation(algo, 'reset')(KEYS, ARGV)
