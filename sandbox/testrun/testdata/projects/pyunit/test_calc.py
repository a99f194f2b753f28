import unittest

import calc


class TestCalc(unittest.TestCase):
    def test_add(self):
        self.assertEqual(calc.add(1, 2), 3)

    def test_add_zero(self):
        self.assertEqual(calc.add(2, 0), 2)

    def test_error(self):
        {}["missing"]

    @unittest.skip("not ready")
    def test_skip(self):
        pass

    def test_sub(self):
        for i in range(3):
            with self.subTest(i=i):
                self.assertEqual(calc.add(i, 0), i)
                self.assertLess(i, 2)


if __name__ == "__main__":
    unittest.main()
