/* mini.c - fixture library for MiniDebugInfo: exported functions (in .dynsym) that call static
 * ones (only in .symtab, so only in the embedded .gnu_debugdata once stripped). */
__attribute__((noinline)) static int mini_hidden_a(int x)
{
	return x * 31 + 7;
}

__attribute__((noinline)) static int mini_hidden_b(int x)
{
	return mini_hidden_a(x) ^ 0x55;
}

__attribute__((noinline)) int mini_export_one(int x)
{
	return mini_hidden_b(x) + 1;
}

__attribute__((noinline)) int mini_export_two(int x)
{
	return mini_hidden_a(x) - mini_export_one(x);
}
