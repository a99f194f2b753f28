import unittest


class T(unittest.TestCase):
    def test_ok(self):
        self.assertTrue(True)
