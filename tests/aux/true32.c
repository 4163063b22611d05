/* true32.c - exit 0, built 32-bit: tests/caps.sh runs it to find out
 * whether this kernel executes 32-bit programs at all. */
int main(void)
{
	return 0;
}
