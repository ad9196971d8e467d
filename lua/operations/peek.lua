-- peek: what acquire would answer, recording nothing.
return decide(algo, false)
