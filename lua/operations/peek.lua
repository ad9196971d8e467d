-- peek: what acquire would answer, recording nothing.
return decide(KEYS, ARGV, algo, false)
