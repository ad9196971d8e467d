-- refund: give cost back to every limit; answer with the state afterwards.
return operation(algo, 'refund')(KEYS, ARGV)
