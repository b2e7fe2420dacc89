"""utility"""
