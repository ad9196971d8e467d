-- acquire: decide and record when every limit admits.
return operation(algo, 'acquire')(KEYS, ARGV)
