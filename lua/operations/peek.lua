-- peek: what acquire would answer, recording nothing.
return operation(algo, 'peek')(KEYS, ARGV)
