-- refund: give cost back to every limit; answer with the state afterwards.
return change(KEYS, ARGV, algo, 'refund')
