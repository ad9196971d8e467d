-- reset: forget the key; answer with the empty state.
return change(algo, 'reset')
