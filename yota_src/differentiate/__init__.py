"""differentiate"""
