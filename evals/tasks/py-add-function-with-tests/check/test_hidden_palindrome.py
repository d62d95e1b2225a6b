import unittest

from textutils import is_palindrome


class HiddenPalindromeTest(unittest.TestCase):
    def test_ignores_case_spaces_and_punctuation(self):
        self.assertTrue(is_palindrome("A man, a plan, a canal: Panama"))
        self.assertTrue(is_palindrome("No 'x' in Nixon"))

    def test_rejects(self):
        self.assertFalse(is_palindrome("hello"))
        self.assertFalse(is_palindrome("ab"))

    def test_trivial(self):
        self.assertTrue(is_palindrome(""))
        self.assertTrue(is_palindrome("a"))
