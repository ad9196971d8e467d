-- acquire: decide and record when every limit admits.
return decide(KEYS, ARGV, algo, true)
