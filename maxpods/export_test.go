package maxpods

// The table in byte order, for the tests of this folder (maxpods_test.go,
// expr_test.go): nothing else walks the whole table.

// Types returns the number of instance types in the table.
func Types() int { return len(sorted) }

// TypeAt returns the name of the i-th instance type of the table, in byte order, for
// 0 <= i < Types().
func TypeAt(i int) string { return slots[sorted[i]].name() }
