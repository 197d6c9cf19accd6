from convert import celsius_to_fahrenheit, fahrenheit_to_celsius


def test_freezing_point() -> None:
    assert celsius_to_fahrenheit(0) == 32
    assert fahrenheit_to_celsius(32) == 0
