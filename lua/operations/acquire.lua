-- acquire: decide and record when every limit admits.
return decide(algo, true)
