-- lease: acquire a slice and mark the state (one limit; core/lease/).
return operation(algo, 'lease')(KEYS, ARGV)
